"""The site's build tools: layout, figures, math, checks, the chapter scaffold and the mkdocs
hooks (``tools/hooks/``). ``tools.layout`` is the one module that knows where things are."""
