/* RW4 type-ID names (docs/rw4-arena.md, "Type IDs") and the RW FNV-1 hash. Names are CamelCase,
 * safe in file names. */
#include <stdio.h>

#include "psgfs/formats/arena.h"

struct rw_type_row {
	uint32_t id;
	const char *name;
};

/* Sorted by id for binary search. Old RWG (0x0002xxxx low) names carry an "Rwg" prefix so
 * they never collide with the renderengine ones of the same meaning. */
static const struct rw_type_row rw_types[] = {
    {0x00000000u, "Null"},
    {0x00010000u, "NA"},
    {0x00010001u, "Arena"},
    {0x00010002u, "Raw"},
    {0x00010003u, "Subreference"},
    {0x00010004u, "SectionManifest"},
    {0x00010005u, "SectionTypes"},
    {0x00010006u, "SectionExternalArenas"},
    {0x00010007u, "SectionSubreferences"},
    {0x00010008u, "SectionAtoms"},
    {0x00010009u, "DefArenaImports"},
    {0x0001000Au, "DefArenaExports"},
    {0x0001000Bu, "DefArenaTypes"},
    {0x0001000Cu, "DefArenaDefinedArenaId"},
    {0x0001000Du, "AttributePacket"},
    {0x0001000Eu, "AttributePacketDelegate"},
    {0x0001000Fu, "BitTable"},
    {0x00010010u, "ArenaLocalAtomTable"},
    {0x00020000u, "RwgNA"},
    {0x00020001u, "RwgCamera"},
    {0x00020002u, "RwgPalette"},
    {0x00020003u, "RwgRaster"},
    {0x00020004u, "RwgVertexDescriptor"},
    {0x00020005u, "RwgVertexBuffer"},
    {0x00020006u, "RwgIndexDescriptor"},
    {0x00020007u, "RwgIndexBuffer"},
    {0x00020008u, "RwgLight"},
    {0x00020009u, "RwgMesh"},
    {0x0002000Au, "RwgShader"},
    {0x0002000Bu, "RwgCompiledState"},
    {0x0002000Cu, "RwgRenderObject"},
    {0x0002000Du, "RwgGsData"},
    {0x0002000Eu, "RwgVertexShader"},
    {0x0002000Fu, "RwgVertexData"},
    {0x00020010u, "RwgIndexData"},
    {0x00020011u, "RwgRasterData"},
    {0x00020012u, "RwgBuildState"},
    {0x00020013u, "RwgPixelShader"},
    {0x00020015u, "RwgProfileMesh"},
    {0x00020016u, "RwgDesignViewObject"},
    {0x00020017u, "RwgProfileRenderObject"},
    {0x00020018u, "RwgImage"},
    {0x00020019u, "RwgRenderObjectContainer"},
    {0x0002001Au, "RwgMeshCompiledStateLink"},
    {0x0002001Bu, "RwgShaderCode"},
    {0x00020020u, "RwgFont"},
    {0x00020021u, "RwgGlyphTable"},
    {0x00020022u, "RwgKernTable"},
    {0x00020023u, "RwgPageTable"},
    {0x00020024u, "RwgRasterTexture"},
    {0x00020025u, "RwgFaceName"},
    {0x0002007Fu, "UpdateLocator"},
    {0x00020081u, "MeshHelper"},
    {0x000200E0u, "RenderEngineNA"},
    {0x000200E1u, "ViewportParameters"},
    {0x000200E2u, "ScissorRectParameters"},
    {0x000200E3u, "ClearColorParameters"},
    {0x000200E4u, "ClearDepthStencilParameters"},
    {0x000200E5u, "DrawIndexedParameters"},
    {0x000200E6u, "DrawParameters"},
    {0x000200E7u, "PixelBuffer"},
    {0x000200E8u, "Texture"},
    {0x000200E9u, "VertexDescriptor"},
    {0x000200EAu, "VertexBuffer"},
    {0x000200EBu, "IndexBuffer"},
    {0x000200ECu, "ProgramBuffer"},
    {0x000200EDu, "StateBuffer"},
    {0x000200EEu, "ProgramStateBuffer"},
    {0x000200EFu, "ProgramStates"},
    {0x000200F1u, "SamplerState"},
    {0x000200F3u, "RenderTargetState"},
    {0x000200F4u, "BlendState"},
    {0x000200F5u, "DepthStencilState"},
    {0x000200F6u, "RasterizerState"},
    {0x000200F7u, "VertexProgramState"},
    {0x000200F8u, "ProgramStateHandle"},
    {0x000200F9u, "DrawInstancedParameters"},
    {0x000200FAu, "DrawIndexedInstancedParameters"},
    {0x000200FBu, "Palette"},
    {0x00040000u, "PhysicsNA"},
    {0x00040001u, "Part"},
    {0x00040002u, "PartDefinition"},
    {0x00040003u, "JointedPair"},
    {0x00040004u, "JointLimit"},
    {0x00040005u, "JointSkeleton"},
    {0x00040006u, "Assembly"},
    {0x00040007u, "AssemblyDefinition"},
    {0x00070000u, "AnimationNA"},
    {0x00070001u, "KeyframeAnim"},
    {0x00070002u, "Skeleton"},
    {0x00070003u, "AnimationSkin"},
    {0x00070004u, "Interpolator"},
    {0x00070005u, "FeatherInterpolator"},
    {0x00070006u, "OneBoneIK"},
    {0x00070007u, "TwoBoneIK"},
    {0x00070008u, "Blender"},
    {0x00070009u, "WeightedBlender"},
    {0x0007000Au, "Remapper"},
    {0x0007000Bu, "SkeletonSink"},
    {0x0007000Cu, "SkinSink"},
    {0x0007000Du, "LightSink"},
    {0x0007000Eu, "CameraSink"},
    {0x0007000Fu, "SkinMatrixBuffer"},
    {0x00070010u, "TweakController"},
    {0x00070011u, "ShaderSink"},
    {0x00080000u, "CollisionNA"},
    {0x00080001u, "Volume"},
    {0x00080002u, "SimpleMappedArray"},
    {0x00080003u, "TriangleKdTreeProcedural"},
    {0x00080004u, "KdTreeMappedArray"},
    {0x00080005u, "BBox"},
    {0x00080006u, "ClusteredMesh"},
    {0x00080008u, "Octree"},
    {0x00EB0000u, "RenderMeshData"},
    {0x00EB0001u, "RenderModelData"},
    {0x00EB0003u, "SimpleTriMeshData"},
    {0x00EB0004u, "SplineData"},
    {0x00EB0005u, "RenderMaterialData"},
    {0x00EB0006u, "CollisionMaterialData"},
    {0x00EB0007u, "RollerDescData"},
    {0x00EB0008u, "VersionData"},
    {0x00EB0009u, "LocationDescData"},
    {0x00EB000Au, "CollisionModelData"},
    {0x00EB000Bu, "TableOfContents"},
    {0x00EB000Cu, "CollisionBezierData"},
    {0x00EB000Du, "InstanceData"},
    {0x00EB000Eu, "RenderBlendShapeData"},
    {0x00EB000Fu, "WorldPainterLayerData"},
    {0x00EB0010u, "WorldPainterQuadTreeData"},
    {0x00EB0011u, "WorldPainterDictionaryData"},
    {0x00EB0012u, "NavMeshData"},
    {0x00EB0013u, "RainData"},
    {0x00EB0014u, "AIPathData"},
    {0x00EB0015u, "StatsData"},
    {0x00EB0016u, "MassiveData"},
    {0x00EB0017u, "DepthMapData"},
    {0x00EB0018u, "LionData"},
    {0x00EB0019u, "TriggerInstanceData"},
    {0x00EB001Au, "WaypointData"},
    {0x00EB001Bu, "EmbeddedData"},
    {0x00EB001Cu, "EmitterWaypointData"},
    {0x00EB001Du, "DMOData"},
    {0x00EB001Eu, "HotpointData"},
    {0x00EB001Fu, "GrabData"},
    {0x00EB0020u, "SpatialMap"},
    {0x00EB0021u, "VisualIndicatorData"},
    {0x00EB0022u, "NavMesh2Data"},
    {0x00EB0023u, "RenderOptiMeshData"},
    {0x00EB0024u, "IrradianceData"},
    {0x00EB0025u, "AntiFrustumData"},
    {0x00EB0026u, "BlobData"},
    {0x00EB0027u, "NavPowerData"},
    {0x00EB0028u, "TeamBrandData"},
    {0x00EB0029u, "WorldScriptInstanceData"},
    {0x00EB0064u, "SplineSubref"},
    {0x00EB0065u, "RollerDescSubref"},
    {0x00EB0066u, "RenderMaterialSubref"},
    {0x00EB0067u, "CollisionMaterialSubref"},
    {0x00EB0068u, "LocationDescSubref"},
    {0x00EB0069u, "InstanceSubref"},
    {0x00EB006Au, "WaypointSubref"},
    {0x00EB006Bu, "TriggerInstanceSubref"},
    {0x00EB006Cu, "EmitterWaypointSubref"},
    {0x00EB006Du, "DMOSubref"},
    {0x00EB006Eu, "HotpointSubref"},
    {0x00EB006Fu, "GrabSubref"},
    {0x00EB0070u, "VisualIndicatorSubref"},
    {0x00EC0010u, "ArenaDictionary"},
    {0xAC462E4Au, "TextureTocType"},
};

const char *rw_type_name(uint32_t type_id)
{
	size_t lo = 0, hi = sizeof rw_types / sizeof rw_types[0];

	if (rw_is_base_resource(type_id))
		return "BaseResource";
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rw_types[mid].id == type_id)
			return rw_types[mid].name;
		if (rw_types[mid].id < type_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *rw_type_label(uint32_t type_id, char buf[16])
{
	const char *n = rw_type_name(type_id);

	if (n)
		return n;
	snprintf(buf, 16, "Type_0x%08X", (unsigned)type_id);
	return buf;
}

bool rw_is_base_resource(uint32_t type_id)
{
	return type_id >= RW_T_BASERES_FIRST && type_id <= RW_T_BASERES_LAST;
}

uint32_t rw_hash32(const char *s)
{
	uint32_t h = 0x811C9DC5u;

	for (; *s; s++) {
		h *= 0x01000193u;
		h ^= (uint8_t)*s;
	}
	return h;
}
