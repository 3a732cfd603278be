from flows.coupling import AffineCoupling
from flows.realnvp import RealNVP
