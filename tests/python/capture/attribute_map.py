"""A configuration-like class whose `__getattribute__` and `__setattr__` rename
attributes through a class-level `attribute_map` (as transformers' configs
do), shared by test_getattribute.py and test_copy_getattribute.py. Each test
module subclasses it with its own map and constructor."""


class AttributeMapped:
    # Renames the names in `attribute_map` on read and write.
    attribute_map: dict = {}

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)
