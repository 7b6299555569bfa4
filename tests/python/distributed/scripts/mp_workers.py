"""Two multiprocessing workers (start method from argv: spawn or forkserver),
each running a small torch function 3 times; the parent prints what they sent
back. Plain python and `python -m xjit` must print the same."""

import sys

import torch
import torch.multiprocessing as mp


def layer(x, w):
    return torch.tanh(x @ w).sum(dim=1)


def work(i, q):
    torch.manual_seed(i)
    w = torch.randn(8, 8)
    outs = [layer(torch.randn(4, 8), w) for _ in range(3)]
    q.put((i, [o.tolist() for o in outs]))


if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    q = ctx.Queue()
    procs = [ctx.Process(target=work, args=(i, q)) for i in range(2)]
    for p in procs:
        p.start()
    results = dict(q.get(timeout=300) for _ in procs)
    for p in procs:
        p.join()
        assert p.exitcode == 0, p.exitcode
    for i in sorted(results):
        print(i, [[round(v, 5) for v in o] for o in results[i]])
