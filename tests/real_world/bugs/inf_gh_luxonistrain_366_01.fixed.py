import torch
from torch import Tensor

torch.manual_seed(0)


class DetectionConfusionMatrix:
    def __init__(self, n_classes: int):
        self.n_classes = n_classes
        self.reset()

    def reset(self) -> None:
        self.confusion_matrix = torch.zeros(self.n_classes + 1, self.n_classes + 1, dtype=torch.int64)

    def _update(self, predictions: list, targets: Tensor) -> None:
        for i, pred in enumerate(predictions):
            target = targets[targets[:, 0] == i]
            pred_classes = pred[:, 5].int()
            target_classes = target[:, 1].int()
            if self.confusion_matrix.is_inference():
                self.confusion_matrix = self.confusion_matrix.clone()
            n = min(len(pred_classes), len(target_classes))
            for p, t in zip(pred_classes[:n], target_classes[:n]):
                self.confusion_matrix[t, p] += 1

    def compute(self) -> Tensor:
        return self.confusion_matrix


class Evaluator:
    def __init__(self, metric):
        self.metric = metric

    @torch.inference_mode()
    def on_validation_epoch_start(self):
        self.metric.reset()

    def on_validation_batch_end(self, predictions, targets):
        self.metric._update(predictions, targets)


metric = DetectionConfusionMatrix(n_classes=3)
evaluator = Evaluator(metric)
evaluator.on_validation_epoch_start()
predictions = [torch.cat([torch.rand(2, 5), torch.randint(0, 3, (2, 1)).float()], dim=1)]
targets = torch.tensor([[0, 1.0], [0, 2.0]])
evaluator.on_validation_batch_end(predictions, targets)
print(metric.compute())
