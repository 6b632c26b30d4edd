"""Publish the pictures the test suite made (build/images/, tests/conftest.py's `publish_image`) to docs/images/, the
README's first-screen pictures, with their provenance: which test wrote each, when, at which commit, its sha256.
`make images` runs this after `make test` / `make test-slow`; tests/test_readme.py checks what is published."""
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MADE = ROOT / "build" / "images"
IMAGES = ROOT / "docs" / "images"


def publish(made: Path = MADE, images: Path = IMAGES) -> list:
    "Copy every picture recorded in `made`/provenance.json to `images`, merging the records; the names published."
    books_path = made / "provenance.json"
    if not books_path.exists():
        raise SystemExit(f"nothing to publish: {books_path} does not exist (run make test and make test-slow first)")
    made_books = json.loads(books_path.read_text())
    published_path = images / "provenance.json"
    books = json.loads(published_path.read_text()) if published_path.exists() else {}
    images.mkdir(parents=True, exist_ok=True)
    for name, entry in sorted(made_books.items()):
        shutil.copyfile(made / name, images / name)
        books[name] = entry
    published_path.write_text(json.dumps(dict(sorted(books.items())), indent=1) + "\n")
    return sorted(made_books)


if __name__ == "__main__":
    names = publish()
    print(f"published to {IMAGES.relative_to(ROOT)}: {', '.join(names)}", file=sys.stdout)
