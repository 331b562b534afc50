from singe.cli import main

raise SystemExit(main())
