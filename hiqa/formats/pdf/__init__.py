"""PDF -> Markdown with a true heading tree (``reader.parse_pdf``); one module per job."""
