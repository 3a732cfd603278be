from models.gated import GatedMlp
from models.gates import sigmoid_gate
