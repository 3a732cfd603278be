import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)


class PlainConvUNet(nn.Module):
    def __init__(self, input_channels=1, num_classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(input_channels, 8, 3, padding=1), nn.InstanceNorm2d(8), nn.LeakyReLU(0.01))
        self.seg_layer = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        return self.seg_layer(self.encoder(x))


class nnUNetPredictor(object):
    def __init__(self, use_mirroring=True, device=torch.device('cpu'), verbose=False):
        self.use_mirroring = use_mirroring
        self.allowed_mirroring_axes = (0, 1)
        self.device = device
        self.verbose = verbose
        self.network = None
        self.list_of_parameters = None

    def manual_initialization(self, network, parameters):
        self.network = network
        self.list_of_parameters = parameters

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
    def predict_sliding_window_return_logits(self, input_image):
        self.network = self.network.to(self.device)
        self.network.eval()
        return self._internal_maybe_mirror_and_predict(input_image[None])[0]

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

        if self.verbose:
            print('Prediction done')
        return prediction


folds = [PlainConvUNet().state_dict() for _ in range(2)]
predictor = nnUNetPredictor()
predictor.manual_initialization(PlainConvUNet(), folds)
data = torch.rand(1, 16, 16)
logits = predictor.predict_logits_from_preprocessed_data(data)
segmentation = logits.argmax(0)
print(segmentation.shape)
