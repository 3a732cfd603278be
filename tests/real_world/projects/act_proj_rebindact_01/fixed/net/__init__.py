from net.block import ScaledSkipBlock
