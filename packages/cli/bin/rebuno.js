#!/usr/bin/env node
// Thin launcher so the bin exists before the first build; the CLI lives in dist/main.js.
import "../dist/main.js";
