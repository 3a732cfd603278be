def advantages_from(rewards, values, gamma=0.99):
    next_values = values.roll(-1, dims=0)
    next_values[-1] = 0.0
    return rewards + gamma * next_values - values
