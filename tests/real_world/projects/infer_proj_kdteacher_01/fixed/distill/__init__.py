from distill.trainer import DistillTrainer
