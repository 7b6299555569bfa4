"""collections.OrderedDict, defaultdict, Counter and deque made inside traced
code are modelled by polyfills_collections.py (Note [Modelled library objects]
in csrc/lib/capture/translate/TranslateModels.cpp): they stay in the graph,
answer type()/isinstance() with the library class, and come back as the real
object (one object per model, mutations after a break applied to it). Each
case compares with eager on values, types, identity, exceptions and mutated
inputs (harness.check) and counts the breaks; before the models every one of
them broke at the constructor (GB002) or at its first use."""

import collections

import torch

from harness import check, r


def test_ordered_dict_built_mutated_and_returned():
    def f(x):
        d = collections.OrderedDict(a=x)
        d["b"] = x + 1
        d["c"] = x * 2
        d.move_to_end("a")
        k, v = d.popitem(last=False)
        d.setdefault("z", x - 1)
        return d, k, v, list(d.keys()), [t.sum() for t in d.values()]

    check(f, r(3), graphs=1, breaks=0)


def test_defaultdict_missing_calls_the_factory():
    def f(x):
        groups = collections.defaultdict(list)
        for i, row in enumerate(x):
            groups[i % 2].append(row)
        counts = collections.defaultdict(int)
        for w in ["a", "b", "a"]:
            counts[w] += 1
        return groups, counts, x * counts["a"], counts.default_factory

    check(f, r(4, 2), graphs=1, breaks=0)


def test_counter_counts_iterables_and_mappings():
    def f(x):
        c = collections.Counter(t.shape[0] for t in x.split(2))
        c.update({2: 5})
        c.update([7, 7])
        words = collections.Counter("abracadabra")
        return c, words.most_common(2), c[99], x * words["a"]

    check(f, r(5), graphs=1, breaks=0)


def test_deque_maxlen_and_both_ends():
    def f(x):
        q = collections.deque(maxlen=3)
        for row in x:
            q.append(row)
        first = q.popleft()
        q.appendleft(first * 10)
        q.rotate(1)
        return q, torch.stack(list(q)), len(q), q.maxlen, q[0]

    check(f, r(5, 2), graphs=1, breaks=0)


def test_type_isinstance_and_class_answer_the_library_class():
    def f(x):
        d = collections.OrderedDict()
        q = collections.deque()
        ok = isinstance(d, dict) and type(d) is collections.OrderedDict and q.__class__ is collections.deque
        return x + 1 if ok and not isinstance(q, list) else x - 1

    check(f, r(3), graphs=1, breaks=0)


def test_one_real_object_per_model():
    # The same model returned three times, and held in a list, is one object.
    def f(x):
        d = collections.defaultdict(list)
        d["k"].append(x + 1)
        return d, [d, {"inner": d}], d

    check(f, r(3), graphs=1, breaks=0)


def test_mutations_after_a_break_reach_the_rebuilt_object():
    def f(x):
        d = collections.OrderedDict(a=x)
        q = collections.deque([x])
        print("between")  # a graph break: d and q are rebuilt here
        d["b"] = x + 1
        d.move_to_end("a")
        q.appendleft(x * 2)
        return d, q

    # After the break d and q are real objects held by the resumed frame (as
    # objects passed in: their method calls break); the first graph holds
    # their construction.
    c = check(f, r(3), min_graphs=1, max_recompiles=10)  # the resumed frame's guards see new objects
    assert c["breaks"] >= 1, c


def test_user_object_iteration_and_contains():
    class Bag:
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

        def __contains__(self, k):
            return k in self.items

    def f(x):
        b = Bag([1, 2, 3])
        total = 0
        for v in b:
            total += v
        return x * total, list(b), 2 in b, 5 in b, sorted(b, reverse=True)

    check(f, r(3), graphs=1, breaks=0)


def test_dict_of_a_dict_model_copies_its_items():
    def f(x):
        dd = collections.defaultdict(int, {"a": 1})
        dd["b"] += 2
        od = collections.OrderedDict(z=x, y=x + 1)
        od.move_to_end("z")
        return dict(dd), dict(od)

    check(f, r(3), graphs=1, breaks=0)


def test_what_the_models_do_not_model_breaks_and_stays_exact():
    # Mutation during iteration raises in eager; comparisons and repr are left
    # to Python on the rebuilt objects; a missing key raises the same KeyError.
    def mutated(x):
        d = collections.OrderedDict(a=x, b=x)
        for k in d:
            d["c"] = x
        return d

    def compared(x):
        d = collections.OrderedDict(a=1)
        q = collections.deque([1, 2], maxlen=2)
        return x * (d == {"a": 1}), q == collections.deque([1, 2]), repr(q)

    def missing(x):
        d = collections.OrderedDict(a=x)
        return d["b"]

    def popped_empty(x):
        q = collections.deque([x])
        q.pop()
        return q.popleft()

    for fn in (mutated, compared, missing, popped_empty):
        check(fn, r(3))


def test_a_container_passed_in_is_the_callers_object():
    # Objects from outside are not models: mutated in place, returned as themselves.
    def f(d, q, x):
        d["new"] = x
        d.move_to_end("a")
        q.append(x)
        return d, q

    def args(i):
        return collections.OrderedDict(a=1, b=2), collections.deque([0], maxlen=2), torch.randn(3)

    check(f, args, max_recompiles=10)


def test_reversed_of_a_user_object_is_left_to_python():
    # Only __iter__: reversed() raises TypeError in eager; the models' reversed()
    # goes to the rebuilt library object. Neither is answered from __iter__.
    class Bag:
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

    def user(x):
        return list(reversed(Bag([x, x + 1])))

    def model(x):
        d = collections.OrderedDict(a=x, b=x + 1)
        return list(reversed(d)), list(reversed(collections.deque([x, x * 2])))

    check(user, r(3))
    check(model, r(3))


def test_python_recursion_is_inlined_to_a_constant_depth():
    # depth(5) is six nested calls of one code object, each inlined.
    def f(x):
        def depth(n):
            return 0 if n == 0 else 1 + depth(n - 1)
        return x * depth(5)

    check(f, r(3), graphs=1, breaks=0)


# namedtuple's own methods (_make, a classmethod defined inside
# collections.namedtuple) are plain Python code: inlined, not a break.
_Pair = collections.namedtuple("_Pair", "a b")


def namedtuple_make_from_list(x):
    p = _Pair._make([x.sum(), x.mean()])
    return p, p.a / p.b, type(p) is _Pair


def namedtuple_make_wrong_length(x):
    try:
        _Pair._make([x, x, x])
    except TypeError as e:
        return x, str(e)
    return x


def test_namedtuple_make_is_inlined():
    from harness import check
    from xacc.jit import reset

    reset()
    check(namedtuple_make_from_list, lambda i: (torch.randn(4, 4),), graphs=1, breaks=0)
    reset()
    check(namedtuple_make_wrong_length, lambda i: (torch.randn(4, 4),))  # raises inside: eager's message
