# Makes the helpers beside this file (buildtree.py) importable from every test
# directory under tests/python, whatever pytest's rootdir is.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
