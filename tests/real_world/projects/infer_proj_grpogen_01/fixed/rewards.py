import torch


def count_reward(completions, target_token=7):
    return (completions == target_token).float().sum(dim=1)


def group_advantages(rewards, eps=1e-4):
    return (rewards - rewards.mean()) / (rewards.std() + eps)
