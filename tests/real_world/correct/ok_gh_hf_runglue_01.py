import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class Accelerator:
    """The one method of accelerate.Accelerator this loop uses, on a single CPU process."""

    def backward(self, loss):
        loss.backward()


class Args:
    gradient_accumulation_steps = 2
    num_train_epochs = 1
    learning_rate = 2e-5
    weight_decay = 0.0


class SequenceClassifier(nn.Module):
    def __init__(self, vocab=20, hidden=8, num_labels=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, labels):
        logits = self.classifier(self.emb(input_ids).mean(1))
        return type("Out", (), {"loss": nn.functional.cross_entropy(logits, labels), "logits": logits})


args = Args()
accelerator = Accelerator()
model = SequenceClassifier()
no_decay = ["bias", "LayerNorm.weight"]
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": args.weight_decay},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=args.learning_rate)
train_dataloader = [dict(input_ids=torch.randint(0, 20, (2, 5)), labels=torch.randint(0, 2, (2,))) for _ in range(4)]
num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / max_train_steps)

completed_steps = 0
for epoch in range(args.num_train_epochs):
    model.train()
    total_loss = 0
    for step, batch in enumerate(train_dataloader):
        outputs = model(**batch)
        loss = outputs.loss
        # We keep track of the loss at each epoch
        total_loss += loss.detach().float()
        loss = loss / args.gradient_accumulation_steps
        accelerator.backward(loss)
        if step % args.gradient_accumulation_steps == 0 or step == len(train_dataloader) - 1:
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            completed_steps += 1

        if completed_steps >= max_train_steps:
            break
