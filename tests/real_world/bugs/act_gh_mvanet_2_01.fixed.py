import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def get_activation_fn(activation):
    """Return an activation function given a string"""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(F"activation should be relu/gelu, not {activation}.")


def make_cbr(in_dim, out_dim):
    return nn.Sequential(nn.Conv2d(in_dim, out_dim, kernel_size=3, padding=1), nn.BatchNorm2d(out_dim), nn.PReLU())


def rescale_to(x, scale_factor: float = 2, interpolation='nearest'):
    return F.interpolate(x, scale_factor=scale_factor, mode=interpolation)


def resize_as(x, y, interpolation='bilinear'):
    return F.interpolate(x, size=y.shape[-2:], mode=interpolation)


def image2patches(x):
    """b c (hg h) (wg w) -> (hg wg b) c h w"""
    b, c, H, W = x.shape
    x = x.reshape(b, c, 2, H // 2, 2, W // 2).permute(2, 4, 0, 1, 3, 5)
    return x.reshape(4 * b, c, H // 2, W // 2)


def patches2image(x):
    """(hg wg b) c h w -> b c (hg h) (wg w)"""
    n, c, h, w = x.shape
    x = x.reshape(2, 2, n // 4, c, h, w).permute(2, 3, 0, 4, 1, 5)
    return x.reshape(n // 4, c, 2 * h, 2 * w)


class MCRM(nn.Module):
    def __init__(self, d_model, num_heads, pool_ratios=[2, 4]):
        super(MCRM, self).__init__()
        self.attention = nn.ModuleList([nn.MultiheadAttention(d_model, num_heads, dropout=0.1) for _ in range(4)])
        self.linear1 = nn.Linear(d_model, d_model * 2)
        self.linear2 = nn.Linear(d_model * 2, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(0.1)
        self.dropout1 = nn.Dropout(0.1)
        self.dropout2 = nn.Dropout(0.1)
        self.sigmoid = nn.Sigmoid()
        self.activation = get_activation_fn('relu')
        self.sal_conv = nn.Conv2d(d_model, 1, 1)
        self.pool_ratios = pool_ratios

    def forward(self, x):
        b, c, h, w = x.size()
        loc, glb = x.split([4, 1], dim=0)  # 4,c,h,w; 1,c,h,w
        patched_glb = image2patches(glb)

        # generate token attention map
        token_attention_map = self.sigmoid(self.sal_conv(glb))
        token_attention_map = F.interpolate(token_attention_map, size=patches2image(loc).shape[-2:], mode='nearest')
        loc = loc * image2patches(token_attention_map)
        pools = []
        for pool_ratio in self.pool_ratios:
            tgt_hw = (round(h / pool_ratio), round(w / pool_ratio))
            pool = F.adaptive_avg_pool2d(patched_glb, tgt_hw)
            pools.append(pool.flatten(2))  # nl(4),c,hw
        pools = torch.cat(pools, 2).permute(0, 2, 1).unsqueeze(2)  # nl(4),nphw,1,c
        loc_ = loc.flatten(2).permute(0, 2, 1).unsqueeze(2)  # nl,(h w),1,c
        outputs = []
        for i, q in enumerate(loc_.unbind(dim=0)):  # traverse all local patches
            v = pools[i]
            k = v
            outputs.append(self.attention[i](q, k, v)[0])
        outputs = torch.cat(outputs, 1)
        src = loc.view(4, c, -1).permute(2, 0, 1) + self.dropout1(outputs)
        src = self.norm1(src)
        src = src + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(src)).clone())))
        src = self.norm2(src)

        src = src.permute(1, 2, 0).reshape(4, c, h, w)  # freshed loc
        glb = glb + F.interpolate(patches2image(src), size=glb.shape[-2:], mode='nearest')  # freshed glb
        return torch.cat((src, glb), 0), token_attention_map


class MVANet(nn.Module):
    def __init__(self):
        super().__init__()
        emb_dim = 8
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=4, padding=1), nn.GELU())  # stands in for SwinB
        self.output4 = make_cbr(16, emb_dim)
        self.dec_blk4 = MCRM(emb_dim, 1, [2, 4])
        self.conv4 = make_cbr(emb_dim, emb_dim)
        self.output = nn.Sequential(nn.Conv2d(emb_dim, 1, kernel_size=3, padding=1))

        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True

    def forward(self, x):
        glb = rescale_to(x, scale_factor=0.5, interpolation='bilinear')
        loc = image2patches(x)
        input = torch.cat((loc, glb), dim=0)
        feature = self.backbone(input)
        e4 = self.output4(feature)
        e4, tokenattmap4 = self.dec_blk4(e4)
        e4 = self.conv4(e4)
        loc_e4, glb_e4 = e4.split([4, 1], dim=0)
        output_cat = patches2image(loc_e4)
        output_cat = output_cat + resize_as(glb_e4, output_cat)
        final_output = self.output(rescale_to(output_cat, scale_factor=4))
        return final_output, tokenattmap4


model = MVANet()
model.train()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
criterion = nn.BCEWithLogitsLoss()
for step in range(2):
    image = torch.rand(1, 3, 32, 32)
    gt = (torch.rand(1, 1, 32, 32) > 0.5).float()
    final_output, tokenattmap4 = model(image)
    loss = criterion(final_output, gt) + F.binary_cross_entropy(tokenattmap4, F.interpolate(gt, size=tokenattmap4.shape[-2:]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
