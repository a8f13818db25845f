"""The README's Python example runs as written (the first ```python block of its "Python"
section), so it cannot rot."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_example_runs():
    text = README.read_text()
    section = text[text.index("\n## Python\n"):]
    section = section[:section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "no python example in the README's Python section"
    exec(compile(blocks[0], "README.md (Python)", "exec"), {})
