import torch.nn as nn


def conv_block(c_in, c_out, drop=0.25):
    return nn.Sequential(
        nn.Conv1d(c_in, c_out, 3, padding=1, bias=False),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Dropout(drop),
    )
