from net.block import PostActBlock
