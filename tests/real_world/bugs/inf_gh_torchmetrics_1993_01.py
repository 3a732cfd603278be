import torch
import torch.nn as nn

torch.manual_seed(0)


class MulticlassAccuracy:
    """Minimal stateful metric: states are (re)created by reset() and accumulated in place by update()."""

    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.reset()

    def reset(self):
        self.correct = torch.zeros(())
        self.total = torch.zeros(())

    def update(self, preds, target):
        self.correct += (preds.argmax(-1) == target).sum()
        self.total += target.numel()

    def compute(self):
        return self.correct / self.total


class AccuracyCallback:
    def __init__(self, num_classes):
        self.acc_metric = MulticlassAccuracy(num_classes)

    def on_validation_epoch_start(self):
        self.acc_metric.reset()

    def on_validation_batch_end(self, outputs, batch):
        x, target = batch
        preds = outputs["preds"]
        self.acc_metric.update(preds, target)


def validate(model, loader, callback):
    # the evaluation loop runs the epoch-start hook and validation_step under inference mode,
    # the batch-end hook runs after the step returned
    with torch.inference_mode():
        callback.on_validation_epoch_start()
    for batch in loader:
        with torch.inference_mode():
            outputs = {"preds": model(batch[0])}
        callback.on_validation_batch_end(outputs, batch)
    return callback.acc_metric.compute()


model = nn.Linear(4, 3)
loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
print(validate(model, loader, AccuracyCallback(3)))
