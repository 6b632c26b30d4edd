// MathJax 2.7 configuration for the docs (copied by docs/build.py to assets/mathjax/config/local.js, loaded
// by the `config=` list of the MathJax URL in docs/mkdocs.yml). jupyter-server-mathjax ships the STIX-Web
// fonts only: use them, never MathJax's default TeX web fonts or a CDN. MathJax's blank measuring font is
// `url('about:blank')`, which Chromium refuses with a console error; a local() name loads nothing.
MathJax.Hub.Config({
  "HTML-CSS": { availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null,
                linebreaks: { automatic: true },
                styles: { "@font-face": { "font-family": "MathJax_Blank", src: "local('MathJax_Blank')" } } },
});
MathJax.Ajax.loadComplete("[MathJax]/config/local.js");
