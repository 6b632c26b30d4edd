"""Publish the pictures the test suite made (build/images/, tests/conftest.py's `publish_image`) to docs/images/, the
README's first-screen pictures, with their provenance: which test wrote each, when, at which commit, its sha256.
`make images` runs this after `make test` / `make test-slow`; tests/test_readme.py checks what is published."""
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MADE = ROOT / "build" / "images"
IMAGES = ROOT / "docs" / "images"


def record(books_path: Path, entries: dict) -> None:
    "Merge `entries` (picture name: its provenance) into the provenance file `books_path`, kept sorted by name."
    books = json.loads(books_path.read_text()) if books_path.exists() else {}
    books.update(entries)
    books_path.write_text(json.dumps(dict(sorted(books.items())), indent=1) + "\n")


def publish(made: Path = MADE, images: Path = IMAGES) -> list:
    "Copy every picture recorded in `made`/provenance.json to `images`, merging the records; the names published."
    books_path = made / "provenance.json"
    if not books_path.exists():
        raise SystemExit(f"nothing to publish: {books_path} does not exist (run make test and make test-slow first)")
    made_books = json.loads(books_path.read_text())
    images.mkdir(parents=True, exist_ok=True)
    for name in made_books:
        shutil.copyfile(made / name, images / name)
    record(images / "provenance.json", made_books)
    return sorted(made_books)


if __name__ == "__main__":
    names = publish()
    print(f"published to {IMAGES.relative_to(ROOT)}: {', '.join(names)}")
