/**
 * The Cap'n Proto schema of the LPX compiler manifest `manifest.v2.capnp.bin`, as capnp-es struct
 * classes in the shape its code generator (`capnpc-ts`) emits, limited to the fields upstream's
 * operator reads (and writes in its test fixtures).
 *
 * Every offset, struct size, union discriminant and enum ordinal is the one of upstream's generated
 * Go code: `internal/dynamo/lpx/manifest/v2/gbuild_manifest.capnp.go` (capnpc-go; Go's
 * `capnp.Struct(s).Uint32(4)` is a byte offset, `.Bit(193)` a bit offset, `.Ptr(2)` a pointer
 * index, exactly as capnp-es's `utils.getUint32(4, this)`, `utils.getBit(193, this)` and
 * `utils.getStruct(2, ...)`). Struct sizes are the generated `capnp.ObjectSize{DataSize, PointerCount}`
 * so a decoded struct keeps every field a newer writer put after ours. Type ids are the generated
 * `*_TypeID` constants. Reading is lazy: an accessor throws the capnp-es error when the bytes
 * under it are malformed, which `manifest-v2.ts` turns into upstream's "reading ..." errors.
 * @module
 */
import * as $ from 'capnp-es';

/** The only manifest contract revision upstream accepts (generated `CurrentContractRevision`). */
export const CURRENT_CONTRACT_REVISION = 2;

/** Generated `CompilationMode` (enum ordinals). */
export const CompilationMode = { LPU_ONLY: 0, LPX: 1 } as const;
export type CompilationMode = (typeof CompilationMode)[keyof typeof CompilationMode];

/** Generated `CompilationMode.String()`: the schema name of an ordinal, `""` for an unknown one. */
export function compilationModeName(mode: number): string {
  return mode === CompilationMode.LPU_ONLY ? 'lpuOnly' : mode === CompilationMode.LPX ? 'lpx' : '';
}

/** Generated `DeviceType` (enum ordinals). */
export const DeviceType = { LPU: 0, CUDA: 1, CPU: 2 } as const;
export type DeviceType = (typeof DeviceType)[keyof typeof DeviceType];

/** Generated `PartitionInfo_detail_Which` (union discriminants of `PartitionInfo.detail`). */
export const PartitionInfo_Detail_Which = { LPU: 0, CUDA: 1, CPU: 2 } as const;
export type PartitionInfo_Detail_Which = (typeof PartitionInfo_Detail_Which)[keyof typeof PartitionInfo_Detail_Which];

/** `RuntimeIoConfig` (generated size 16 data bytes, 0 pointers). */
export class RuntimeIoConfig extends $.Struct {
  static override readonly _capnp = { displayName: 'RuntimeIoConfig', id: 'd56d56fafa085238', size: new $.ObjectSize(16, 0) };
  get protocol(): number {
    return $.utils.getUint16(0, this);
  }
  set protocol(value: number) {
    $.utils.setUint16(0, value, this);
  }
  /** The runtime I/O mode (upstream reads it as `Reserved1`). */
  get reserved1(): number {
    return $.utils.getUint16(2, this);
  }
  set reserved1(value: number) {
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

/** `ProgramConfig` (generated size 32 data bytes, 4 pointers). */
export class ProgramConfig extends $.Struct {
  static override readonly _capnp = { displayName: 'ProgramConfig', id: 'c22680a74d7bbfe2', size: new $.ObjectSize(32, 4) };
  get batchSize(): number {
    return $.utils.getUint32(0, this);
  }
  set batchSize(value: number) {
    $.utils.setUint32(0, value, this);
  }
  get supportsCpuEmbeddings(): boolean {
    return $.utils.getBit(193, this);
  }
  set supportsCpuEmbeddings(value: boolean) {
    $.utils.setBit(193, value, this);
  }
  get standaloneTokenEmbeddings(): boolean {
    return $.utils.getBit(195, this);
  }
  set standaloneTokenEmbeddings(value: boolean) {
    $.utils.setBit(195, value, this);
  }
  override toString(): string {
    return 'ProgramConfig_' + super.toString();
  }
}

/** `PropSyncChain` (generated size 0 data bytes, 1 pointer). */
export class PropSyncChain extends $.Struct {
  static override readonly _capnp = { displayName: 'PropSyncChain', id: 'e4a2574339b7691f', size: new $.ObjectSize(0, 1) };
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

/** `DeploymentInfo` (generated size 16 data bytes, 3 pointers). */
export class DeploymentInfo extends $.Struct {
  static override readonly _capnp = { displayName: 'DeploymentInfo', id: 'a151d4fb5c342435', size: new $.ObjectSize(16, 3) };
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

/** `PartitionRef` (generated size 8 data bytes, 0 pointers). */
export class PartitionRef extends $.Struct {
  static override readonly _capnp = { displayName: 'PartitionRef', id: 'cc1f6d5da735cb49', size: new $.ObjectSize(8, 0) };
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

/** `TopologyMetadata` (generated size 0 data bytes, 2 pointers). */
export class TopologyMetadata extends $.Struct {
  static override readonly _capnp = { displayName: 'TopologyMetadata', id: '9ac600e40b2f2bd2', size: new $.ObjectSize(0, 2) };
  get topologyFamily(): string {
    return $.utils.getText(0, this);
  }
  set topologyFamily(value: string) {
    $.utils.setText(0, value, this);
  }
  get partitionShape(): $.List<number> {
    return $.utils.getList(1, $.Uint32List, this);
  }
  _hasPartitionShape(): boolean {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initPartitionShape(length: number): $.List<number> {
    return $.utils.initList(1, $.Uint32List, length, this);
  }
  override toString(): string {
    return 'TopologyMetadata_' + super.toString();
  }
}

/** `LpuPartitionArtifact` (generated size 8 data bytes, 4 pointers). */
export class LpuPartitionArtifact extends $.Struct {
  static override readonly _capnp = { displayName: 'LpuPartitionArtifact', id: 'ae800a9bf3fc6050', size: new $.ObjectSize(8, 4) };
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
  override toString(): string {
    return 'LpuPartitionArtifact_' + super.toString();
  }
}

/** `CudaPartitionArtifact` (generated size 0, 0). */
export class CudaPartitionArtifact extends $.Struct {
  static override readonly _capnp = { displayName: 'CudaPartitionArtifact', id: '9eaa468d1b6452a4', size: new $.ObjectSize(0, 0) };
  override toString(): string {
    return 'CudaPartitionArtifact_' + super.toString();
  }
}

/** `CpuPartitionArtifact` (generated size 0, 0). */
export class CpuPartitionArtifact extends $.Struct {
  static override readonly _capnp = { displayName: 'CpuPartitionArtifact', id: '9c491b4f77040820', size: new $.ObjectSize(0, 0) };
  override toString(): string {
    return 'CpuPartitionArtifact_' + super.toString();
  }
}

/**
 * The `PartitionInfo.detail` union group: discriminant at byte 0 of the parent's data section,
 * every member at pointer 3 (generated `PartitionInfo_detail`).
 */
export class PartitionInfo_Detail extends $.Struct {
  static readonly LPU = PartitionInfo_Detail_Which.LPU;
  static readonly CUDA = PartitionInfo_Detail_Which.CUDA;
  static readonly CPU = PartitionInfo_Detail_Which.CPU;
  static override readonly _capnp = { displayName: 'detail', id: 'c2825cc7c53e1399', size: new $.ObjectSize(8, 4) };
  get lpu(): LpuPartitionArtifact {
    $.utils.testWhich('lpu', $.utils.getUint16(0, this), 0, this);
    return $.utils.getStruct(3, LpuPartitionArtifact, this);
  }
  _hasLpu(): boolean {
    return !$.utils.isNull($.utils.getPointer(3, this));
  }
  _initLpu(): LpuPartitionArtifact {
    $.utils.setUint16(0, 0, this);
    return $.utils.initStructAt(3, LpuPartitionArtifact, this);
  }
  get _isLpu(): boolean {
    return $.utils.getUint16(0, this) === 0;
  }
  _initCuda(): CudaPartitionArtifact {
    $.utils.setUint16(0, 1, this);
    return $.utils.initStructAt(3, CudaPartitionArtifact, this);
  }
  get _isCuda(): boolean {
    return $.utils.getUint16(0, this) === 1;
  }
  _initCpu(): CpuPartitionArtifact {
    $.utils.setUint16(0, 2, this);
    return $.utils.initStructAt(3, CpuPartitionArtifact, this);
  }
  get _isCpu(): boolean {
    return $.utils.getUint16(0, this) === 2;
  }
  override toString(): string {
    return 'PartitionInfo_Detail_' + super.toString();
  }
  which(): number {
    return $.utils.getUint16(0, this);
  }
}

/** `PartitionInfo` (generated size 8 data bytes, 4 pointers). */
export class PartitionInfo extends $.Struct {
  static override readonly _capnp = { displayName: 'PartitionInfo', id: 'c2825cc7c53e1399', size: new $.ObjectSize(8, 4) };
  get partition(): PartitionRef {
    return $.utils.getStruct(0, PartitionRef, this);
  }
  _hasPartition(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initPartition(): PartitionRef {
    return $.utils.initStructAt(0, PartitionRef, this);
  }
  get detail(): PartitionInfo_Detail {
    return $.utils.getAs(PartitionInfo_Detail, this);
  }
  _initDetail(): PartitionInfo_Detail {
    return $.utils.getAs(PartitionInfo_Detail, this);
  }
  override toString(): string {
    return 'PartitionInfo_' + super.toString();
  }
}

/** `PartSelect` (generated size 0 data bytes, 1 pointer). */
export class PartSelect extends $.Struct {
  static override readonly _capnp = { displayName: 'PartSelect', id: '906961f37780d08b', size: new $.ObjectSize(0, 1) };
  static _Partitions: $.ListCtor<PartitionRef>;
  get partitions(): $.List<PartitionRef> {
    return $.utils.getList(0, PartSelect._Partitions, this);
  }
  _hasPartitions(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initPartitions(length: number): $.List<PartitionRef> {
    return $.utils.initList(0, PartSelect._Partitions, length, this);
  }
  override toString(): string {
    return 'PartSelect_' + super.toString();
  }
}

/** `RuntimeAssets` (generated size 0 data bytes, 2 pointers). */
export class RuntimeAssets extends $.Struct {
  static override readonly _capnp = { displayName: 'RuntimeAssets', id: 'd7d44733b7c9406d', size: new $.ObjectSize(0, 2) };
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

/** `ArtifactInfo` (generated size 0 data bytes, 7 pointers). */
export class ArtifactInfo extends $.Struct {
  static override readonly _capnp = { displayName: 'ArtifactInfo', id: 'fd4e240e22cb8a78', size: new $.ObjectSize(0, 7) };
  static _Partitions: $.ListCtor<PartitionInfo>;
  get partitions(): $.List<PartitionInfo> {
    return $.utils.getList(0, ArtifactInfo._Partitions, this);
  }
  _hasPartitions(): boolean {
    return !$.utils.isNull($.utils.getPointer(0, this));
  }
  _initPartitions(length: number): $.List<PartitionInfo> {
    return $.utils.initList(0, ArtifactInfo._Partitions, length, this);
  }
  get runtimeAssets(): RuntimeAssets {
    return $.utils.getStruct(4, RuntimeAssets, this);
  }
  _hasRuntimeAssets(): boolean {
    return !$.utils.isNull($.utils.getPointer(4, this));
  }
  _initRuntimeAssets(): RuntimeAssets {
    return $.utils.initStructAt(4, RuntimeAssets, this);
  }
  get partSelect(): PartSelect {
    return $.utils.getStruct(5, PartSelect, this);
  }
  _hasPartSelect(): boolean {
    return !$.utils.isNull($.utils.getPointer(5, this));
  }
  _initPartSelect(): PartSelect {
    return $.utils.initStructAt(5, PartSelect, this);
  }
  override toString(): string {
    return 'ArtifactInfo_' + super.toString();
  }
}

/** `Manifest`, the message root (generated size 8 data bytes, 5 pointers). */
export class Manifest extends $.Struct {
  static override readonly _capnp = { displayName: 'Manifest', id: 'dfeff145e86a5a8f', size: new $.ObjectSize(8, 5) };
  get contractRevision(): number {
    return $.utils.getUint32(0, this);
  }
  set contractRevision(value: number) {
    $.utils.setUint32(0, value, this);
  }
  get deployment(): DeploymentInfo {
    return $.utils.getStruct(1, DeploymentInfo, this);
  }
  _hasDeployment(): boolean {
    return !$.utils.isNull($.utils.getPointer(1, this));
  }
  _initDeployment(): DeploymentInfo {
    return $.utils.initStructAt(1, DeploymentInfo, this);
  }
  get artifacts(): ArtifactInfo {
    return $.utils.getStruct(2, ArtifactInfo, this);
  }
  _hasArtifacts(): boolean {
    return !$.utils.isNull($.utils.getPointer(2, this));
  }
  _initArtifacts(): ArtifactInfo {
    return $.utils.initStructAt(2, ArtifactInfo, this);
  }
  override toString(): string {
    return 'Manifest_' + super.toString();
  }
}

DeploymentInfo._SelectedPropSyncChains = $.CompositeList(PropSyncChain);
PartSelect._Partitions = $.CompositeList(PartitionRef);
ArtifactInfo._Partitions = $.CompositeList(PartitionInfo);
