from model.stack import CheckpointedStack
