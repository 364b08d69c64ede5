import sys

from trafka.cli import main

sys.exit(main())
