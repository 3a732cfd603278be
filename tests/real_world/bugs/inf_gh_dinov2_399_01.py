import itertools
import math
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CenterPadding(nn.Module):
    def __init__(self, multiple):
        super().__init__()
        self.multiple = multiple

    def _get_pad(self, size):
        new_size = math.ceil(size / self.multiple) * self.multiple
        pad_size = new_size - size
        pad_size_left = pad_size // 2
        pad_size_right = pad_size - pad_size_left
        return pad_size_left, pad_size_right

    @torch.inference_mode()
    def forward(self, x):
        pads = list(itertools.chain.from_iterable(self._get_pad(m) for m in x.shape[:1:-1]))
        output = F.pad(x, pads)
        return output


class DinoVisionTransformer(nn.Module):
    def __init__(self, patch_size=4, embed_dim=16, depth=4):
        super().__init__()
        self.patch_size = patch_size
        self.embed_dim = embed_dim
        self.patch_embed = nn.Conv2d(3, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.LayerNorm(embed_dim), nn.Linear(embed_dim, embed_dim), nn.GELU()) for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(embed_dim)

    def get_intermediate_layers(self, x, n=1, reshape=False, return_class_token=False, norm=True):
        B, _, h, w = x.shape
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(B, -1, -1), x), dim=1)
        outputs = []
        for i, blk in enumerate(self.blocks):
            x = x + blk(x)
            if i in n:
                outputs.append(x)
        if norm:
            outputs = [self.norm(out) for out in outputs]
        class_tokens = [out[:, 0] for out in outputs]
        outputs = [out[:, 1:] for out in outputs]
        if reshape:
            outputs = [
                out.reshape(B, h // self.patch_size, w // self.patch_size, -1).permute(0, 3, 1, 2).contiguous()
                for out in outputs
            ]
        if return_class_token:
            return tuple(zip(outputs, class_tokens))
        return tuple(outputs)


class BNHead(nn.Module):
    def __init__(self, in_channels, min_depth=0.001, max_depth=10.0):
        super().__init__()
        self.conv_depth = nn.Conv2d(in_channels * 2, 1, kernel_size=1)
        self.min_depth = min_depth
        self.max_depth = max_depth
        self.loss_decode = nn.L1Loss()

    def _transform_inputs(self, inputs):
        x, cls_token = inputs[-1]
        cls_token = cls_token[:, :, None, None].expand_as(x)
        return torch.cat([x, cls_token], dim=1)

    def forward(self, inputs, img_metas=None):
        feat = self._transform_inputs(inputs)
        return torch.sigmoid(self.conv_depth(feat)) * (self.max_depth - self.min_depth) + self.min_depth

    def forward_train(self, img, inputs, img_metas, depth_gt):
        depth_pred = self.forward(inputs, img_metas)
        depth_pred = F.interpolate(depth_pred, size=depth_gt.shape[2:], mode="bilinear", align_corners=False)
        return {"loss_depth": self.loss_decode(depth_pred, depth_gt)}


class DepthEncoderDecoder(nn.Module):
    def __init__(self, backbone, decode_head):
        super().__init__()
        self.backbone = backbone
        self.decode_head = decode_head

    def extract_feat(self, img):
        return self.backbone(img)

    def forward_train(self, img, img_metas, depth_gt):
        x = self.extract_feat(img)
        return self.decode_head.forward_train(img, x, img_metas, depth_gt)


def _make_dinov2_linear_depther(backbone, out_index=(1, 3)):
    linear_depth_head = BNHead(in_channels=backbone.embed_dim)
    model = DepthEncoderDecoder(backbone=backbone, decode_head=linear_depth_head)
    model.backbone.forward = partial(
        backbone.get_intermediate_layers,
        n=out_index,
        reshape=True,
        return_class_token=True,
        norm=False,
    )
    model.backbone.register_forward_pre_hook(lambda _, x: CenterPadding(backbone.patch_size)(x[0]))
    return model


model = _make_dinov2_linear_depther(DinoVisionTransformer())
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    images = torch.rand(2, 3, 14, 14)
    depths = torch.rand(2, 1, 14, 14) * 10
    losses = model.forward_train(images, None, depths)
    optimizer.zero_grad()
    losses["loss_depth"].backward()
    optimizer.step()
