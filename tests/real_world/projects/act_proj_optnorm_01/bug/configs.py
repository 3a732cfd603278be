SMALL = dict(dim=8, hidden=16, use_norm=False, act_inplace=True)
BASE = dict(dim=8, hidden=32, use_norm=True, act_inplace=True)
