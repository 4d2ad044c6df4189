import re, sys
import pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from pathlib import Path
def no_comm(text):
    text, puts = re.subn(r"^(\s+)_appyc_nvshmem_put\(.*$", r"\1pass", text, flags=re.M)
    text, waits = re.subn(r"^(\s+)(\w+) = _appyc_nvshmem_wait\(.*$", r"\1\2 = \2", text, flags=re.M)
    assert puts == 4 and waits == 4, (puts, waits)
    return text
for src, dst in zip(sys.argv[1::2], sys.argv[2::2]):
    Path(dst).write_text(no_comm(Path(src).read_text()))
