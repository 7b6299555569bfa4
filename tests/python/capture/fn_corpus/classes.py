"""User classes: constructors, methods, properties, inheritance and super(),
class and static methods, dunder methods, dict subclasses, slots."""

import torch

from . import T, case


class Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k

    def apply(self, x):
        return x + self.k


class Base:
    def forward(self, x):
        return x + 1


class Child(Base):
    def forward(self, x):
        return super().forward(x) * 2


class WithProperty:
    def __init__(self, n):
        self._n = n

    @property
    def double(self):
        return self._n * 2


class Counter:
    total = 0

    @classmethod
    def make(cls, n):
        c = cls()
        c.n = n
        return c

    @staticmethod
    def square(v):
        return v * v


class Vec:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return Vec(self.t + other.t)

    def __len__(self):
        return self.t.shape[0]

    def __getitem__(self, i):
        return self.t[i]


class Record(dict):
    def __getattr__(self, name):
        return self[name]


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


class Registry:
    items = {"relu": torch.relu, "tanh": torch.tanh}


@case(T)
def construct_and_call(x):
    return Scaler(3)(x)


@case(T)
def construct_and_method(x):
    s = Scaler(2.0)
    return s.apply(x)


@case(T)
def bound_method_variable(x):
    f = Scaler(0.5).apply
    return f(x)


@case(T)
def super_call(x):
    return Child().forward(x)


@case(T)
def property_read(x):
    return x * WithProperty(3).double


@case(T)
def classmethod_factory(x):
    c = Counter.make(4)
    return x * c.n


@case(T)
def staticmethod_call(x):
    return Counter.square(x)


@case(T)
def class_attribute_read(x):
    return x + Counter.total


@case(T)
def dunder_add(x):
    v = Vec(x) + Vec(x * 2)
    return v.t


@case(T)
def dunder_len_getitem(x):
    v = Vec(x)
    return v[len(v) - 1]


@case(T)
def dict_subclass_getattr(x):
    r = Record(logits=x, loss=x.sum())
    return r.logits * r.loss


@case(T)
def slots_class(x):
    s = Slotted(x, 2)
    return s.a * s.b


@case(T)
def class_dict_lookup(x):
    return Registry.items["tanh"](x)


@case(T)
def object_attribute_set_inside(x):
    s = Scaler(1)
    s.k = 5
    return s(x)


@case(T)
def isinstance_user_class(x):
    obj = Child()
    return x * 2 if isinstance(obj, Base) else x


@case(T)
def local_class(x):
    class Local:
        def __init__(self, v):
            self.v = v

        def get(self):
            return self.v + 1
    return Local(x).get()


@case(T)
def vars_of_object(x):
    s = Scaler(3)
    return x * vars(s)["k"]


@case(T)
def type_name_of_object(x):
    return x, type(Scaler(1)).__name__


@case(T)
def instance_list_of_objects(x):
    scalers = [Scaler(i) for i in range(1, 4)]
    return [s(x) for s in scalers]


@case(T)
def tensor_subclass_param(x):
    p = torch.nn.Parameter(x.clone())
    return p * 2, isinstance(p, torch.nn.Parameter)
