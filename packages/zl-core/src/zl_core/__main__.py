import sys

from zl_core.cli import main

sys.exit(main())
