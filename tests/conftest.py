import os
import sys

# make the tests' private helper modules (tests/_*.py) importable
sys.path.insert(0, os.path.dirname(__file__))
