import itertools
from functools import lru_cache

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


@lru_cache(maxsize=2)
def compute_gaussian(tile_size, sigma_scale=1. / 8, value_scaling_factor=1, dtype=torch.float16, device=torch.device('cpu')):
    center = [i // 2 for i in tile_size]
    sigmas = [i * sigma_scale for i in tile_size]
    grids = torch.meshgrid(*[torch.arange(s, dtype=torch.float32) for s in tile_size], indexing='ij')
    gaussian_importance_map = torch.exp(-sum(((g - c) ** 2) / (2 * s ** 2) for g, c, s in zip(grids, center, sigmas)))
    gaussian_importance_map /= (torch.max(gaussian_importance_map) / value_scaling_factor)
    gaussian_importance_map = gaussian_importance_map.to(device=device, dtype=dtype)
    # gaussian_importance_map cannot be 0, otherwise we may end up with nans!
    mask = gaussian_importance_map == 0
    gaussian_importance_map[mask] = torch.min(gaussian_importance_map[~mask])
    return gaussian_importance_map


def compute_steps_for_sliding_window(image_size, tile_size, tile_step_size):
    target_step_sizes_in_voxels = [i * tile_step_size for i in tile_size]
    num_steps = [int(np.ceil((i - k) / j)) + 1 for i, j, k in zip(image_size, target_step_sizes_in_voxels, tile_size)]
    steps = []
    for dim in range(len(tile_size)):
        max_step_value = image_size[dim] - tile_size[dim]
        actual_step_size = max_step_value / (num_steps[dim] - 1) if num_steps[dim] > 1 else 99999999999
        steps.append([int(np.round(actual_step_size * i)) for i in range(num_steps[dim])])
    return steps


class PlainConvUNet(nn.Module):
    def __init__(self, input_channels=1, num_classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(input_channels, 8, 3, padding=1), nn.InstanceNorm2d(8), nn.LeakyReLU(0.01, inplace=True))
        self.seg_layer = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        return self.seg_layer(self.encoder(x))


class nnUNetPredictor(object):
    def __init__(self, tile_step_size=0.5, use_gaussian=True, use_mirroring=True, device=torch.device('cpu')):
        self.tile_step_size = tile_step_size
        self.use_gaussian = use_gaussian
        self.use_mirroring = use_mirroring
        self.allowed_mirroring_axes = (0, 1)
        self.device = device
        self.patch_size = (8, 8)
        self.num_segmentation_heads = 3

    def manual_initialization(self, network, parameters):
        self.network = network
        self.list_of_parameters = parameters

    @torch.inference_mode()
    def predict_logits_from_preprocessed_data(self, data):
        prediction = None
        for params in self.list_of_parameters:
            self.network.load_state_dict(params)
            if prediction is None:
                prediction = self.predict_sliding_window_return_logits(data).to('cpu')
            else:
                prediction += self.predict_sliding_window_return_logits(data).to('cpu')
        if len(self.list_of_parameters) > 1:
            prediction /= len(self.list_of_parameters)
        return prediction

    def _internal_get_sliding_window_slicers(self, image_size):
        slicers = []
        steps = compute_steps_for_sliding_window(image_size, self.patch_size, self.tile_step_size)
        for sx in steps[0]:
            for sy in steps[1]:
                slicers.append(tuple([slice(None), *[slice(si, si + ti) for si, ti in zip((sx, sy), self.patch_size)]]))
        return slicers

    @torch.inference_mode()
    def _internal_maybe_mirror_and_predict(self, x):
        mirror_axes = self.allowed_mirroring_axes if self.use_mirroring else None
        prediction = self.network(x)
        if mirror_axes is not None:
            mirror_axes = [m + 2 for m in mirror_axes]
            axes_combinations = [
                c for i in range(len(mirror_axes)) for c in itertools.combinations(mirror_axes, i + 1)
            ]
            for axes in axes_combinations:
                prediction += torch.flip(self.network(torch.flip(x, axes)), axes)
            prediction /= (len(axes_combinations) + 1)
        return prediction

    @torch.inference_mode()
    def _internal_predict_sliding_window_return_logits(self, data, slicers):
        results_device = self.device
        predicted_logits = torch.zeros((self.num_segmentation_heads, *data.shape[1:]), dtype=torch.half, device=results_device)
        n_predictions = torch.zeros(data.shape[1:], dtype=torch.half, device=results_device)
        if self.use_gaussian:
            gaussian = compute_gaussian(tuple(self.patch_size), sigma_scale=1. / 8, value_scaling_factor=10, device=results_device)
        else:
            gaussian = 1
        for sl in slicers:
            workon = torch.clone(data[sl][None], memory_format=torch.contiguous_format)
            prediction = self._internal_maybe_mirror_and_predict(workon)[0].to(results_device)
            if self.use_gaussian:
                prediction *= gaussian
            predicted_logits[sl] += prediction
            n_predictions[sl[1:]] += gaussian
        torch.div(predicted_logits, n_predictions, out=predicted_logits)
        return predicted_logits

    @torch.inference_mode()
    def predict_sliding_window_return_logits(self, input_image):
        self.network = self.network.to(self.device)
        self.network.eval()
        slicers = self._internal_get_sliding_window_slicers(input_image.shape[1:])
        return self._internal_predict_sliding_window_return_logits(input_image, slicers)


# one training step per fold, then ensemble prediction
folds = []
for fold in range(2):
    network = PlainConvUNet()
    optimizer = torch.optim.SGD(network.parameters(), lr=1e-2, momentum=0.99, nesterov=True)
    data, target = torch.rand(2, 1, 8, 8), torch.randint(0, 3, (2, 8, 8))
    output = network(data)
    loss = nn.functional.cross_entropy(output, target)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(network.parameters(), 12)
    optimizer.step()
    folds.append(network.state_dict())

predictor = nnUNetPredictor()
predictor.manual_initialization(PlainConvUNet(), folds)
logits = predictor.predict_logits_from_preprocessed_data(torch.rand(1, 12, 12))
print(logits.shape, logits.argmax(0).shape)
