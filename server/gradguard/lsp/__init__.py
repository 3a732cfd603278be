"""The gradguard language server (pygls 2). Entry point: `gradguard.lsp.server.main`."""
