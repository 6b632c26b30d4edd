"""mkdocs hook (docs/mkdocs.yml): mkdocs-jupyter writes one MathJax URL into every notebook page, but pages
sit at different depths; make it relative to each page, so the site works offline and under any base path."""
from mkdocs.utils import get_relative_url


def on_post_page(output: str, page, config) -> str:
    return output.replace("@@SITE_ROOT@@", get_relative_url(".", page.url))
