// arrow-c-device/integration: the C Data integration protocol of Arrow's
// archery (CDataIntegration) and a run of it over integration JSON files.
export { CDataIntegration, runIntegration, type IntegrationSummary } from './io/integration.js';
