from moe.layer import MoE
