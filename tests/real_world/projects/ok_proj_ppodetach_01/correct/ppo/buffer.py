class RolloutBuffer:
    def __init__(self):
        self.states, self.actions, self.logprobs, self.rewards, self.values = [], [], [], [], []

    def clear(self):
        for lst in (self.states, self.actions, self.logprobs, self.rewards, self.values):
            del lst[:]
