from blocks.gated import GatedUnit
