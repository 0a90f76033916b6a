"""A bot that, instead of playing, looks for the referee's secrets and reports what it found.

Run by a tournament as a local SDK entry (``probe_data`` beside it names the data folder:
its environment holds nothing of the referee's); it exits after its report, so the
tournament stops on it.
"""

import os
import sys
from pathlib import Path

data = Path(Path(__file__).with_name("probe_data").read_text().strip())
print(f"probing as uid {os.getuid()}")
try:
    print(f"READ {len((data / 'oddtrick.sqlite3').read_bytes())} bytes of the database")
except OSError as error:
    print(f"DENIED {data}/oddtrick.sqlite3: {error.strerror}")
try:
    print(f"LISTED {sorted(os.listdir(data))}")
except OSError as error:
    print(f"DENIED listing: {error.strerror}")
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        print(f"SAW {pid}: {Path(f'/proc/{pid}/cmdline').read_bytes().replace(bytes(1), b' ')!r}")
        for fd in os.listdir(f"/proc/{pid}/fd"):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if str(data) in target:
                print(f"FOUND THE DATA FOLDER through /proc/{pid}/fd/{fd}: {target}")
    except OSError:
        pass
print("probe done", flush=True)
sys.exit(3)
