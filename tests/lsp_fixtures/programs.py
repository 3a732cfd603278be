"""The programs the language-server tests open (1-based line numbers in the comments)."""

LEAF_INPLACE = (
    "import torch\n"
    "w = torch.rand(4, requires_grad=True)\n"
    "w += 1\n"  # line 3: GG101
    "loss = w.sum()\n"
    "loss.backward()\n"
)

INDEX_WRITE_LOOP = (
    "import torch\n"
    "x = torch.zeros(4)\n"
    "w = torch.rand(4, requires_grad=True)\n"
    "x[0] = torch.rand(1) * w[0]\n"
    "for i in range(3):\n"
    "    x[i+1] = torch.sin(x[i]) * w[i]\n"  # line 6: GG301
    "loss = x.sum()\n"
    "loss.backward()\n"
)

RNN_CARRIED_STATE = (
    "import torch\n"
    "rnn = torch.nn.RNN(10, 20, 2)\n"
    "opt = torch.optim.Adadelta(rnn.parameters(), lr=0.01)\n"
    "train_set_x = torch.randn(5, 3, 3, 10)\n"
    "h_cur = torch.zeros(2, 3, 20)\n"
    "for i in range(5):\n"
    "    opt.zero_grad()\n"
    "    train_output, h_next = rnn(train_set_x[i], h_cur)\n"
    "    rnn_loss = train_output.sum()\n"
    "    rnn_loss.backward(retain_graph=True)\n"  # line 10
    "    opt.step()\n"  # line 11
    "    h_cur = h_next\n"  # line 12
)

# Two parameter updates that use .grad: each gets the safe fix "do it under torch.no_grad()".
SAFE_FIXES = (
    "import torch\n"
    "w = torch.rand(3, requires_grad=True)\n"
    "b = torch.rand(3, requires_grad=True)\n"
    "loss = (w * b).sum()\n"
    "loss.backward()\n"
    "w -= 0.1 * w.grad\n"  # line 6
    "b -= 0.1 * b.grad\n"  # line 7
)

# Chinese text and an emoji before the bug on the same line (and Chinese comments around it).
UNICODE_LINE = (
    "import torch\n"
    "# 叶子张量：原地操作会报错 😋\n"
    "w = torch.rand(4, requires_grad=True)\n"
    'note = "梯度😋"; w += 1  # 原地操作（in-place 操作）\n'  # line 4
)

# A syntax error in one function must not hide the finding in another.
SYNTAX_ERROR_ELSEWHERE = (
    "import torch\n"
    "\n"
    "\n"
    "def train():\n"
    "    w = torch.rand(4, requires_grad=True)\n"
    "    w += 1\n"  # line 6: GG101
    "    return w\n"
    "\n"
    "\n"
    "def broken(:\n"  # line 10: does not parse
    "    return 1\n"
)

HOVER_TOPICS = (
    "import torch\n"
    "w = torch.rand(3, requires_grad=True)\n"
    "y = w.exp()\n"
    "d = y.detach()\n"
    "c = y.clone()\n"
    "e = y.data\n"
    "y.add_(1)\n"
    "print(y.is_leaf, y.grad_fn, y._version)\n"
    "with torch.no_grad():\n"
    "    pass\n"
    "torch.autograd.set_detect_anomaly(True)\n"
    "y.sum().backward(retain_graph=True)\n"
)
