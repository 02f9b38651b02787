/**
 * The diagnostic bundle: one zip with everything needed to understand a stall or a
 * failure, and nothing private. See docs/diagnostics.md.
 */
export { DEFAULT_BUNDLE_LIMITS, type BundleLimits, type DiagnosticContext, type DiagnosticNode } from './bundle-context';
export { diagnosticBundleFileName, previewDiagnosticBundle, writeDiagnosticBundle, type DiagnosticPreview, type WrittenBundle } from './bundle-writer';
export { diagnose, type Diagnosis, type Finding, type StallCause } from './diagnosis';
export { Redactor, type RedactionCounts, type RedactionKind } from './redaction';
