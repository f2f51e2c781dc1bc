import sys

from relu_gating.cli import main

sys.exit(main())
