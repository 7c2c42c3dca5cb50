# The README's picture: one function, two inputs, two different autograd graphs.
#   studybot snippet graph docs/examples/branches.py --of small,large --out docs/images
import torch


def f(x):
    y = (x * x).sum()
    if y.item() > 1.5:  # the branch depends on the data, so the graph does too
        return y * 3
    return (y * 4).exp()


small = f(torch.tensor([0.5, 0.5], requires_grad=True))
large = f(torch.tensor([1.0, 2.0], requires_grad=True))
