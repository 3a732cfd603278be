import math


def impose_initial_condition(u, xt, t0_mask):
    u[t0_mask, 0] = -(math.pi * xt[t0_mask, 0]).sin()
    return u
