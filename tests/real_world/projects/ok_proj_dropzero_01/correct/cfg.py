DEFAULTS = {"dim": 12, "hidden": 24, "proj_drop": 0.0}
