# SPDX-License-Identifier: BSD-3-Clause
import sys

from .cli import main

sys.exit(main())
