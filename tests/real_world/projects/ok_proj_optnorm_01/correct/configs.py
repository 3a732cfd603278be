SMALL = dict(dim=8, hidden=16, use_norm=True, act_inplace=True)
TINY = dict(dim=8, hidden=8, use_norm=False, act_inplace=False)
