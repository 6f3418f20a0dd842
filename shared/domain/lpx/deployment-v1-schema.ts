/**
 * The Cap'n Proto schema of upstream's split LPX build contract `deployment.v1.capnp.bin` (the
 * scheduler-facing half; the execution contract it references is opaque here), as capnp-es struct
 * classes in the shape `capnpc-ts` emits, limited to the fields upstream's operator reads (and
 * writes in its test fixtures).
 *
 * Every offset, struct size, union discriminant and enum ordinal is the one of upstream's generated
 * Go code: `internal/dynamo/lpx/manifest/deployment/v1/gbuild_deployment.capnp.go` and the
 * imported `manifest/common/v1/gbuild_common.capnp.go` (`PartitionRef`, `DeviceType`,
 * `ContractFile`). Go's `capnp.Struct(s).Uint32(4)` is a byte offset, `.Bit(32)` a bit offset,
 * `.Ptr(2)` a pointer index, exactly as capnp-es's `utils.getUint32(4, this)`,
 * `utils.getBit(32, this)` and `utils.getStruct(2, ...)`. Struct sizes are the generated
 * `capnp.ObjectSize{DataSize, PointerCount}`; type ids the generated `*_TypeID` constants.
 * Reading is lazy: an accessor throws the capnp-es error when the bytes under it are malformed,
 * which `deployment-v1.ts` turns into upstream's "reading ..." errors. `Deployment.checkpoint`
 * (pointer 6) is not read by the operator's normalization and has no accessor here.
 * @module
 */
import * as $ from 'capnp-es';

/** The only deployment contract revision upstream accepts (generated `CurrentContractRevision`). */
export const CURRENT_CONTRACT_REVISION = 1;

/** Generated `CompilationMode` (enum ordinals). */
export const CompilationMode = { LPU_ONLY: 0, LPX: 1 } as const;

/** Generated `CompilationMode.String()`: the schema name of an ordinal, `""` for an unknown one. */
export function compilationModeName(mode: number): string {
  return mode === CompilationMode.LPU_ONLY ? 'lpuOnly' : mode === CompilationMode.LPX ? 'lpx' : '';
}

/** Generated `RuntimeIoProtocol` (enum ordinals). */
export const RuntimeIoProtocol = { HOST: 0, FPGA_ROCE: 1 } as const;

/** Generated `FpgaIoMode` (enum ordinals; `dibDeb` is the largest supported). */
export const FpgaIoMode = { SIMPLE: 0, COMPAT: 1, DIB_DEB: 2 } as const;

/** Generated `LpuArchitecture` (enum ordinals). */
export const LpuArchitecture = { UNSPECIFIED: 0, LP20: 1, LP30: 2 } as const;

/** Generated `LpuArchitecture.String()`: the schema name of an ordinal, `""` for an unknown one. */
export function lpuArchitectureName(architecture: number): string {
  return ['unspecified', 'lp20', 'lp30'][architecture] ?? '';
}

/** Generated common `DeviceType` (enum ordinals). */
export const DeviceType = { LPU: 0, CUDA: 1, CPU: 2 } as const;

/** Generated `PartitionDeployment_detail_Which` (union discriminants of `PartitionDeployment.detail`). */
export const PartitionDeployment_Detail_Which = { LPU: 0, CUDA: 1, CPU: 2 } as const;

/** Common `PartitionRef` (generated size 8 data bytes, 0 pointers). */
export class PartitionRef extends $.Struct {
  static override readonly _capnp = { displayName: 'PartitionRef', id: '879c593dd5b038c9', size: new $.ObjectSize(8, 0) };
  get deviceType(): number {
    return $.utils.getUint16(0, this);
  }
  set deviceType(value: number) {
    $.utils.setUint16(0, value, this);
  }
  get partitionId(): number {
    return $.utils.getUint32(4, this);
  }
  set partitionId(value: number) {
    $.utils.setUint32(4, value, this);
  }
  override toString(): string {
    return 'PartitionRef_' + super.toString();
  }
}

/** Common `ContractFile`: a bundle-relative path and the SHA-256 of its bytes (generated size 0, 2 pointers). */
export class ContractFile extends $.Struct {
  static override readonly _capnp = { displayName: 'ContractFile', id: 'cc19dc536f6caa3f', size: new $.ObjectSize(0, 2) };
  get path(): string {
    return $.utils.getText(0, this);
  }
  set path(value: string) {
    $.utils.setText(0, value, this);
  }
  /** The digest bytes (a copy); empty when unset. */
  get sha256(): Uint8Array {
    if ($.utils.isNull($.utils.getPointer(1, this))) return new Uint8Array(0);
    return $.utils.getData(1, this).toUint8Array().slice();
  }
  set sha256(value: Uint8Array) {
    $.utils.initData(1, value.length, this).copyBuffer(value);
  }
  override toString(): string {
    return 'ContractFile_' + super.toString();
  }
}

/** `BuildIdentity` (generated size 0 data bytes, 1 pointer). */
export class BuildIdentity extends $.Struct {
  static override readonly _capnp = { displayName: 'BuildIdentity', id: 'd0e7ed3ef51f57f9', size: new $.ObjectSize(0, 1) };
  get buildId(): string {
    return $.utils.getText(0, this);
  }
  set buildId(value: string) {
    $.utils.setText(0, value, this);
  }
  override toString(): string {
    return 'BuildIdentity_' + super.toString();
  }
}

/** `ProgramConfig` (generated size 8 data bytes, 2 pointers). */
export class ProgramConfig extends $.Struct {
  static override readonly _capnp = { displayName: 'ProgramConfig', id: 'e13c796825aca58b', size: new $.ObjectSize(8, 2) };
  get batchSize(): number {
    return $.utils.getUint32(0, this);
  }
  set batchSize(value: number) {
    $.utils.setUint32(0, value, this);
  }
  get supportsCpuEmbeddings(): boolean {
    return $.utils.getBit(32, this);
  }
  set supportsCpuEmbeddings(value: boolean) {
    $.utils.setBit(32, value, this);
  }
  get standaloneTokenEmbeddings(): boolean {
    return $.utils.getBit(33, this);
  }
  set standaloneTokenEmbeddings(value: boolean) {
    $.utils.setBit(33, value, this);
  }
  override toString(): string {
    return 'ProgramConfig_' + super.toString();
  }
}

/** `PropSyncChain` (generated size 0 data bytes, 1 pointer). */
export class PropSyncChain extends $.Struct {
  static override readonly _capnp = { displayName: 'PropSyncChain', id: '8a2b4a1188f3156d', size: new $.ObjectSize(0, 1) };
  get partitionIds(): $.List<number> {
    return $.utils.getList(0, $.Uint32List, this);
  }
  _hasPartitionIds(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initPartitionIds(length: number): $.List<number> {
    return $.utils.initList(0, $.Uint32List, length, this);
  }
  override toString(): string {
    return 'PropSyncChain_' + super.toString();
  }
}

/** `RuntimeIoConfig` (generated size 16 data bytes, 0 pointers). */
export class RuntimeIoConfig extends $.Struct {
  static override readonly _capnp = { displayName: 'RuntimeIoConfig', id: 'd2da7d280c347740', size: new $.ObjectSize(16, 0) };
  get protocol(): number {
    return $.utils.getUint16(0, this);
  }
  set protocol(value: number) {
    $.utils.setUint16(0, value, this);
  }
  get fpgaMode(): number {
    return $.utils.getUint16(2, this);
  }
  set fpgaMode(value: number) {
    $.utils.setUint16(2, value, this);
  }
  get ioFpgaCount(): number {
    return $.utils.getUint32(4, this);
  }
  set ioFpgaCount(value: number) {
    $.utils.setUint32(4, value, this);
  }
  get fanoutFactor(): number {
    return $.utils.getUint32(8, this);
  }
  set fanoutFactor(value: number) {
    $.utils.setUint32(8, value, this);
  }
  override toString(): string {
    return 'RuntimeIoConfig_' + super.toString();
  }
}

/** `DeploymentInfo`, the root's `config` (generated size 16 data bytes, 3 pointers). */
export class DeploymentInfo extends $.Struct {
  static override readonly _capnp = { displayName: 'DeploymentInfo', id: 'fd3ce92fb33e4ab2', size: new $.ObjectSize(16, 3) };
  static _SelectedPropSyncChains: $.ListCtor<PropSyncChain>;
  get compilationMode(): number {
    return $.utils.getUint16(0, this);
  }
  set compilationMode(value: number) {
    $.utils.setUint16(0, value, this);
  }
  get numLpuNodes(): number {
    return $.utils.getUint32(4, this);
  }
  set numLpuNodes(value: number) {
    $.utils.setUint32(4, value, this);
  }
  get program(): ProgramConfig {
    return $.utils.getStruct(0, ProgramConfig, this);
  }
  _hasProgram(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initProgram(): ProgramConfig {
    return $.utils.initStructAt(0, ProgramConfig, this);
  }
  get selectedPropSyncChains(): $.List<PropSyncChain> {
    return $.utils.getList(1, DeploymentInfo._SelectedPropSyncChains, this);
  }
  _hasSelectedPropSyncChains(): boolean {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initSelectedPropSyncChains(length: number): $.List<PropSyncChain> {
    return $.utils.initList(1, DeploymentInfo._SelectedPropSyncChains, length, this);
  }
  get runtimeIo(): RuntimeIoConfig {
    return $.utils.getStruct(2, RuntimeIoConfig, this);
  }
  _hasRuntimeIo(): boolean {
    return !$.utils.isNull($.utils.getPointer(2, this));
  }
  _initRuntimeIo(): RuntimeIoConfig {
    return $.utils.initStructAt(2, RuntimeIoConfig, this);
  }
  override toString(): string {
    return 'DeploymentInfo_' + super.toString();
  }
}

/** `TopologyMetadata` (generated size 0 data bytes, 2 pointers). */
export class TopologyMetadata extends $.Struct {
  static override readonly _capnp = { displayName: 'TopologyMetadata', id: '95b5d7af5b73d213', size: new $.ObjectSize(0, 2) };
  get topologyFamily(): string {
    return $.utils.getText(0, this);
  }
  set topologyFamily(value: string) {
    $.utils.setText(0, value, this);
  }
  get partitionShape(): $.List<number> {
    return $.utils.getList(1, $.Uint32List, this);
  }
  _initPartitionShape(length: number): $.List<number> {
    return $.utils.initList(1, $.Uint32List, length, this);
  }
  override toString(): string {
    return 'TopologyMetadata_' + super.toString();
  }
}

/** `LpuPartitionArtifact` (generated size 16 data bytes, 3 pointers). */
export class LpuPartitionArtifact extends $.Struct {
  static override readonly _capnp = { displayName: 'LpuPartitionArtifact', id: 'c7a8c84cbae6ba0e', size: new $.ObjectSize(16, 3) };
  get path(): string {
    return $.utils.getText(0, this);
  }
  set path(value: string) {
    $.utils.setText(0, value, this);
  }
  get topology(): string {
    return $.utils.getText(1, this);
  }
  set topology(value: string) {
    $.utils.setText(1, value, this);
  }
  get numChips(): number {
    return $.utils.getUint32(0, this);
  }
  set numChips(value: number) {
    $.utils.setUint32(0, value, this);
  }
  get topologyMetadata(): TopologyMetadata {
    return $.utils.getStruct(2, TopologyMetadata, this);
  }
  _hasTopologyMetadata(): boolean {
    return !$.utils.isNull($.utils.getPointer(2, this));
  }
  _initTopologyMetadata(): TopologyMetadata {
    return $.utils.initStructAt(2, TopologyMetadata, this);
  }
  get devicesPerNode(): number {
    return $.utils.getUint32(4, this);
  }
  set devicesPerNode(value: number) {
    $.utils.setUint32(4, value, this);
  }
  get architecture(): number {
    return $.utils.getUint16(8, this);
  }
  set architecture(value: number) {
    $.utils.setUint16(8, value, this);
  }
  override toString(): string {
    return 'LpuPartitionArtifact_' + super.toString();
  }
}

/** `CudaPartitionArtifact` (generated size 0, 0). */
export class CudaPartitionArtifact extends $.Struct {
  static override readonly _capnp = { displayName: 'CudaPartitionArtifact', id: '9a7000083c582092', size: new $.ObjectSize(0, 0) };
  override toString(): string {
    return 'CudaPartitionArtifact_' + super.toString();
  }
}

/** `CpuPartitionArtifact` (generated size 0, 0). */
export class CpuPartitionArtifact extends $.Struct {
  static override readonly _capnp = { displayName: 'CpuPartitionArtifact', id: '96066f26b6b22046', size: new $.ObjectSize(0, 0) };
  override toString(): string {
    return 'CpuPartitionArtifact_' + super.toString();
  }
}

/**
 * The `PartitionDeployment.detail` union group: discriminant at byte 0 of the parent's data
 * section, every member at pointer 1 (generated `PartitionDeployment_detail`; `HasLpu` and its
 * siblings are false unless the discriminant names them).
 */
export class PartitionDeployment_Detail extends $.Struct {
  static override readonly _capnp = { displayName: 'detail', id: 'e7a32b525b91f7a0', size: new $.ObjectSize(8, 2) };
  which(): number {
    return $.utils.getUint16(0, this);
  }
  get lpu(): LpuPartitionArtifact {
    $.utils.testWhich('lpu', $.utils.getUint16(0, this), PartitionDeployment_Detail_Which.LPU, this);
    return $.utils.getStruct(1, LpuPartitionArtifact, this);
  }
  _hasLpu(): boolean {
    return this.which() === PartitionDeployment_Detail_Which.LPU && !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initLpu(): LpuPartitionArtifact {
    $.utils.setUint16(0, PartitionDeployment_Detail_Which.LPU, this);
    return $.utils.initStructAt(1, LpuPartitionArtifact, this);
  }
  _hasCuda(): boolean {
    return this.which() === PartitionDeployment_Detail_Which.CUDA && !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initCuda(): CudaPartitionArtifact {
    $.utils.setUint16(0, PartitionDeployment_Detail_Which.CUDA, this);
    return $.utils.initStructAt(1, CudaPartitionArtifact, this);
  }
  _hasCpu(): boolean {
    return this.which() === PartitionDeployment_Detail_Which.CPU && !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initCpu(): CpuPartitionArtifact {
    $.utils.setUint16(0, PartitionDeployment_Detail_Which.CPU, this);
    return $.utils.initStructAt(1, CpuPartitionArtifact, this);
  }
  override toString(): string {
    return 'PartitionDeployment_Detail_' + super.toString();
  }
}

/** `PartitionDeployment` (generated size 8 data bytes, 2 pointers). */
export class PartitionDeployment extends $.Struct {
  static override readonly _capnp = { displayName: 'PartitionDeployment', id: 'e7a32b525b91f7a0', size: new $.ObjectSize(8, 2) };
  get partition(): PartitionRef {
    return $.utils.getStruct(0, PartitionRef, this);
  }
  _hasPartition(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initPartition(): PartitionRef {
    return $.utils.initStructAt(0, PartitionRef, this);
  }
  get detail(): PartitionDeployment_Detail {
    return $.utils.getAs(PartitionDeployment_Detail, this);
  }
  override toString(): string {
    return 'PartitionDeployment_' + super.toString();
  }
}

/** `RuntimeAssets` (generated size 0 data bytes, 1 pointer). */
export class RuntimeAssets extends $.Struct {
  static override readonly _capnp = { displayName: 'RuntimeAssets', id: 'c818738947ac521b', size: new $.ObjectSize(0, 1) };
  get tokenEmbeddingsPath(): string {
    return $.utils.getText(0, this);
  }
  set tokenEmbeddingsPath(value: string) {
    $.utils.setText(0, value, this);
  }
  _hasTokenEmbeddingsPath(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  override toString(): string {
    return 'RuntimeAssets_' + super.toString();
  }
}

/** `PartSelect` (generated size 0 data bytes, 1 pointer). */
export class PartSelect extends $.Struct {
  static override readonly _capnp = { displayName: 'PartSelect', id: '8d60be198cd5837c', size: new $.ObjectSize(0, 1) };
  static _Partitions: $.ListCtor<PartitionRef>;
  get partitions(): $.List<PartitionRef> {
    return $.utils.getList(0, PartSelect._Partitions, this);
  }
  _initPartitions(length: number): $.List<PartitionRef> {
    return $.utils.initList(0, PartSelect._Partitions, length, this);
  }
  override toString(): string {
    return 'PartSelect_' + super.toString();
  }
}

/** `Deployment`, the message root (generated size 8 data bytes, 7 pointers). */
export class Deployment extends $.Struct {
  static override readonly _capnp = { displayName: 'Deployment', id: 'c30c331f5220b165', size: new $.ObjectSize(8, 7) };
  static _Partitions: $.ListCtor<PartitionDeployment>;
  get contractRevision(): number {
    return $.utils.getUint32(0, this);
  }
  set contractRevision(value: number) {
    $.utils.setUint32(0, value, this);
  }
  get identity(): BuildIdentity {
    return $.utils.getStruct(0, BuildIdentity, this);
  }
  _hasIdentity(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initIdentity(): BuildIdentity {
    return $.utils.initStructAt(0, BuildIdentity, this);
  }
  get config(): DeploymentInfo {
    return $.utils.getStruct(1, DeploymentInfo, this);
  }
  _hasConfig(): boolean {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initConfig(): DeploymentInfo {
    return $.utils.initStructAt(1, DeploymentInfo, this);
  }
  get partitions(): $.List<PartitionDeployment> {
    return $.utils.getList(2, Deployment._Partitions, this);
  }
  _hasPartitions(): boolean {
    return !$.utils.isNull($.utils.getPointer(2, this));
  }
  _initPartitions(length: number): $.List<PartitionDeployment> {
    return $.utils.initList(2, Deployment._Partitions, length, this);
  }
  get runtimeAssets(): RuntimeAssets {
    return $.utils.getStruct(3, RuntimeAssets, this);
  }
  _hasRuntimeAssets(): boolean {
    return !$.utils.isNull($.utils.getPointer(3, this));
  }
  _initRuntimeAssets(): RuntimeAssets {
    return $.utils.initStructAt(3, RuntimeAssets, this);
  }
  get partSelect(): PartSelect {
    return $.utils.getStruct(4, PartSelect, this);
  }
  _hasPartSelect(): boolean {
    return !$.utils.isNull($.utils.getPointer(4, this));
  }
  _initPartSelect(): PartSelect {
    return $.utils.initStructAt(4, PartSelect, this);
  }
  get execution(): ContractFile {
    return $.utils.getStruct(5, ContractFile, this);
  }
  _hasExecution(): boolean {
    return !$.utils.isNull($.utils.getPointer(5, this));
  }
  _initExecution(): ContractFile {
    return $.utils.initStructAt(5, ContractFile, this);
  }
  override toString(): string {
    return 'Deployment_' + super.toString();
  }
}

DeploymentInfo._SelectedPropSyncChains = $.CompositeList(PropSyncChain);
PartSelect._Partitions = $.CompositeList(PartitionRef);
Deployment._Partitions = $.CompositeList(PartitionDeployment);
