# Run by tests/camel/programs/python_run.cml through py_run: as a script, so
# __name__ is "__main__"; it leaves a value in the shared namespace.
import sys

if __name__ == "__main__":
    print("script ran as", __name__)
    sys.stdout.flush()
