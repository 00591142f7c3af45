#!/usr/bin/env node
// the CLI bundled by `npm run build` (scripts/build-cli.mjs): a few files to load, not some 400
import '../dist/cli/svc.mjs';
