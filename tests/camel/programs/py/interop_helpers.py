"""Python side of python_interop.cml and python_callback.cml (spec 15.18,
`python://` outer functors): each function checks the Python type of what
Camel passed before using it, so a wrong conversion fails loudly."""


def add(a, b):
    assert type(a) is int and type(b) is int
    return a + b


def mean(xs):
    assert type(xs) is list and all(type(x) is float for x in xs)
    return sum(xs) / len(xs)


def describe(flag, name):
    assert type(flag) is bool and type(name) is str
    return f"{name} is {'on' if flag else 'off'}"


def split_pair(pair):
    assert type(pair) is tuple and len(pair) == 2
    word, n = pair
    return (word * n, len(word) * n)


def birthday(person):
    assert type(person) is dict and list(person) == ["name", "age"]
    return {"age": person["age"] + 1, "name": person["name"].upper()}


def matrix(n):
    return [[i * n + j for j in range(n)] for i in range(n)]


def twice(f, x):
    # Calls back into Camel: f is a Camel function value.
    return f(f(x))


def fold(f, xs, init):
    acc = init
    for x in xs:
        acc = f(acc, x)
    return acc


def shout(s):
    print("python says:", s.upper())
    return len(s)


def divide(a, b):
    return a // b
