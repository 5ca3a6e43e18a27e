/* Decode and encode CPU time (CLOCK_THREAD_CPUTIME_ID, like perf stat -e task-clock): CaptureKit at the
 * default level vs the simple peer, 15 alternating rounds of ~2 Mpixel each, the medians. Issue 24.
 *   cc -O2 -Iinclude -Ibenchmarks benchmarks/bench_codec_cpu.c $(ls benchmarks/peers/*.c | grep -v jxl.c) \
 *      -L.build-dist/release -lcapturekit -lzstd -lz -lm -o bench_codec_cpu && taskset -c 1 ./bench_codec_cpu SET.frames...
 * (SET.frames: written by `make bench-codec` to .build-dist/depth-sets/frames/). */
#define _GNU_SOURCE
#include <capturekit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "peers/peers.h"
static double cpu(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmpd(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  ck_depth_codec*ck; ck_depth_codec_create(&ck,0);
  for(int a=1;a<argc;a++){
    FILE*f=fopen(argv[a],"rb"); uint32_t hd[5]; if(fread(hd,4,5,f)!=5) return 2;
    uint32_t w=hd[1],h=hd[2],cnt=hd[3],kind=hd[4]; size_t n=(size_t)w*h;
    uint16_t*fr=malloc(n*2*cnt); if(fread(fr,2,n*cnt,f)!=n*cnt) return 2; fclose(f);
    int32_t fmt= kind==CK_DEPTH_KIND_FLOAT16?CK_FORMAT_DEPTH_F16:CK_FORMAT_DEPTH_MM;
    size_t cb=ck_depth_encode_bound(w,h,fmt), pb=left_zstd_bound(w,h);
    uint8_t*ce=malloc(cb*cnt),*pe=malloc(pb*cnt); size_t*cs=malloc(8*cnt),*ps=malloc(8*cnt); uint16_t*out=malloc(n*2);
    size_t tc_=0,tp_=0;
    for(uint32_t i=0;i<cnt;i++){ck_depth_map m={fr+i*n,w,h,0,fmt,0}; ck_depth_encode(ce+i*cb,cb,&cs[i],ck,&m); ps[i]=left_zstd_encode(pe+i*pb,pb,fr+i*n,w,h); tc_+=cs[i]; tp_+=ps[i];}
    int iters= (int)(2000000/n/cnt)+1; enum{R=15}; double dc[R],dp[R],ec[R],ep[R];
    for(int r=0;r<R;r++){
      double t0=cpu(); for(int k=0;k<iters;k++)for(uint32_t i=0;i<cnt;i++) if(ck_depth_decode(out,n*2,NULL,ck,ce+i*cb,cs[i],fmt)!=CK_OK) return 1;
      double t1=cpu(); for(int k=0;k<iters;k++)for(uint32_t i=0;i<cnt;i++) if(left_zstd_decode(out,pe+i*pb,ps[i],w,h)) return 1;
      double t2=cpu(); for(int k=0;k<iters;k++)for(uint32_t i=0;i<cnt;i++){ck_depth_map m={fr+i*n,w,h,0,fmt,0}; if(ck_depth_encode(ce+i*cb,cb,&cs[i],ck,&m)!=CK_OK) return 1;}
      double t3=cpu(); for(int k=0;k<iters;k++)for(uint32_t i=0;i<cnt;i++) ps[i]=left_zstd_encode(pe+i*pb,pb,fr+i*n,w,h);
      double t4=cpu(); double d=iters*cnt; dc[r]=(t1-t0)/d; dp[r]=(t2-t1)/d; ec[r]=(t3-t2)/d; ep[r]=(t4-t3)/d;
    }
    qsort(dc,R,8,cmpd); qsort(dp,R,8,cmpd); qsort(ec,R,8,cmpd); qsort(ep,R,8,cmpd);
    const char*nm=strrchr(argv[a],'/')?strrchr(argv[a],'/')+1:argv[a];
    printf("%-32s size %.3fx | decode ck %7.1f peer %7.1f us %.2fx | encode ck %7.1f peer %7.1f us %.2fx\n",nm,(double)tp_/tc_,
      dc[R/2]*1e6,dp[R/2]*1e6,dp[R/2]/dc[R/2],ec[R/2]*1e6,ep[R/2]*1e6,ep[R/2]/ec[R/2]);
    fflush(stdout);
  }
  return 0;
}
